"""Performance benchmarks of airflow-hudi-etc: ``python -m bench``; see bench/__main__.py."""
