"""Performance benchmarks of airflow-hudi-etc (issue 6): ``python -m bench``; see bench/__main__.py."""
