"""Airflow notifications of the airflow-hudi-etc provider."""
