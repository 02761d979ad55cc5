-- A mirror of a database table from change-data-capture (docs/cdc.md):
-- Debezium publishes every insert, update and delete of inventory.customers
-- to a Kafka topic; sluice keeps an Iceberg table equal to the database
-- table, keyed by its primary key (deletes become position deletes or
-- deletion vectors, never equality deletes).
--
-- Two pipelines read the same topic into two tables:
--   customers        landed every 5 minutes: micro-batch, the right default
--                    for most CDC (few snapshots, few small files);
--   customers_live   the same with 1 s commits, for a seconds-fresh mirror.
-- Run: sluice run examples/cdc.sql --listen 127.0.0.1:8080
CREATE TABLE lake.customers (
  id BIGINT NOT NULL,
  first_name STRING,
  last_name STRING,
  email STRING,
  updated_at TIMESTAMPTZ,
  PRIMARY KEY (id)
) PARTITIONED BY (bucket(16, id)) WITH ('format-version' = '2');

CREATE TABLE lake.customers_live (
  id BIGINT NOT NULL,
  first_name STRING,
  last_name STRING,
  email STRING,
  updated_at TIMESTAMPTZ,
  PRIMARY KEY (id)
) PARTITIONED BY (bucket(16, id)) WITH ('format-version' = '3');

-- Debezium's JSON converter, with or without schemas; the key of each
-- message is the row's primary key, and a delete is followed by a tombstone.
CREATE SOURCE customer_changes (
  id BIGINT, first_name STRING, last_name STRING, email STRING, updated_at TIMESTAMPTZ
) WITH (connector = 'kafka', brokers = 'localhost:9092',
        topic = 'dbserver1.inventory.customers') FORMAT DEBEZIUM;

CREATE PIPELINE mirror_customers WITH (commit_interval = '5m') AS
  INSERT INTO lake.customers SELECT * FROM customer_changes;

CREATE PIPELINE mirror_customers_live WITH (commit_interval = '1s') AS
  INSERT INTO lake.customers_live SELECT * FROM customer_changes;
