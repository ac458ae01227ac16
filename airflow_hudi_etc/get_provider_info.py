"""Airflow provider metadata (entry point ``apache_airflow_provider``).

Kept free of imports so that provider discovery (``airflow providers list``) never loads the
operators, Spark or the Hudi layer.
"""

from __future__ import annotations

INTEGRATION = "Apache Hudi (event-time compaction)"
#: as airflow_hudi_etc.assets.ASSET_SCHEMES (kept literal: provider discovery imports nothing)
ASSET_SCHEMES = ["hudi-etc+file", "hudi-etc+s3", "hudi-etc+s3a", "hudi-etc+s3n", "hudi-etc+gs", "hudi-etc+gcs",
                 "hudi-etc+abfs", "hudi-etc+abfss", "hudi-etc+hdfs", "hudi-etc+memory"]


def get_provider_info() -> dict:
    return {
        "package-name": "airflow-hudi-etc",
        "name": "Apache Hudi event-time compaction",
        "description": (
            "Event-time freshness guarantee for Apache Hudi Merge-On-Read read-optimized views: "
            "a sensor and a deferrable trigger that wait for an event-time compaction window, operators that schedule, "
            "execute, roll back event-time compactions through spark-submit and publish the "
            "threshold in the Hive metastore; an Airflow asset per table (URI scheme hudi-etc+ then the storage's, "
            "e.g. hudi-etc+s3://bucket/table) "
            "with an event each time its read-optimized view gets fresher, and an event trigger for AssetWatcher."
        ),
        "integrations": [
            {
                "integration-name": INTEGRATION,
                "external-doc-url": "https://hudi.apache.org/",
                "tags": ["apache"],
            }
        ],
        "hooks": [{"integration-name": INTEGRATION, "python-modules": ["airflow_hudi_etc.hooks.hudi"]}],
        "sensors": [{"integration-name": INTEGRATION, "python-modules": ["airflow_hudi_etc.sensors.event_time"]}],
        "triggers": [{"integration-name": INTEGRATION, "python-modules": ["airflow_hudi_etc.triggers.event_time"]}],
        # one module per operator family (airflow_hudi_etc.operators.compaction re-exports them all)
        "operators": [{"integration-name": INTEGRATION, "python-modules": [
            "airflow_hudi_etc.operators.base", "airflow_hudi_etc.operators.scheduling",
            "airflow_hudi_etc.operators.execution", "airflow_hudi_etc.operators.rollback",
            "airflow_hudi_etc.operators.catalog_sync"]}],
        "notifications": ["airflow_hudi_etc.notifications.jsonl.JsonLinesNotifier"],
        "asset-uris": [
            {
                "schemes": ASSET_SCHEMES,
                "handler": "airflow_hudi_etc.assets.sanitize_uri",
                "factory": "airflow_hudi_etc.assets.create_asset",
                "to_openlineage_converter": "airflow_hudi_etc.assets.convert_asset_to_openlineage",
            }
        ],
        "connection-types": [
            {
                "connection-type": "hudi",
                "hook-class-name": "airflow_hudi_etc.hooks.hudi.HudiTableHook",
                "hook-name": "Apache Hudi table storage",
                "ui-field-behaviour": {
                    "hidden-fields": ["schema", "port"],
                    "relabeling": {
                        "host": "Endpoint URL",
                        "login": "Access key id",
                        "password": "Secret access key",
                    },
                    "placeholders": {
                        "host": "https://s3.eu-west-1.amazonaws.com (empty: the filesystem's default)",
                        "login": "fsspec option 'key' (S3)",
                        "password": "fsspec option 'secret' (S3)",
                        "extra": '{"storage_options": {"client_kwargs": {"region_name": "eu-west-1"}}}',
                    },
                },
                "conn-fields": {
                    "storage_options": {
                        "label": "fsspec storage options",
                        "description": (
                            "JSON object passed to the fsspec filesystem of the table path (merged over "
                            "key/secret/endpoint_url from the fields above)"
                        ),
                        "schema": {"type": ["object", "null"]},
                    },
                    "table_path": {
                        "label": "Table path (for Test)",
                        "description": "A table on this storage: the Test button reads its timeline with these credentials",
                        "schema": {"type": ["string", "null"]},
                    },
                    "region_name": {
                        "label": "Region",
                        "description": "S3 region (client_kwargs.region_name)",
                        "schema": {"type": ["string", "null"]},
                    },
                    "token": {
                        "label": "Session token",
                        "description": "Temporary-credential session token (fsspec option 'token')",
                        "schema": {"type": ["string", "null"], "format": "password"},
                    },
                },
            }
        ],
    }
