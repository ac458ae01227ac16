"""Airflow sensors of the airflow-hudi-etc provider."""
