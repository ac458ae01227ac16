"""Airflow operators of the airflow-hudi-etc provider."""
