"""Airflow hooks of the airflow-hudi-etc provider."""
