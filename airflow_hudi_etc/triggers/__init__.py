"""Airflow triggers of the airflow-hudi-etc provider."""
