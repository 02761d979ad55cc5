-- One definition of each metric: events POSTed over HTTP land raw in lake.events
-- and, from the same source, as per-minute metrics in lake.metrics_per_minute,
-- each minute committed once, exactly once, as soon as the watermark passes it
-- (events up to 5 s out of order still count; later ones go to the dead-letter
-- table with the reason "late"). The same script over files with
-- `sluice run --bounded` computes the same rows: the batch run of the stream.
-- Run: sluice run examples/metrics.sql --listen 127.0.0.1:8080
CREATE TABLE lake.events (
  id BIGINT NOT NULL,
  user_id BIGINT,
  kind STRING,
  ts TIMESTAMPTZ
) PARTITIONED BY (day(ts)) WITH ('format-version' = '2');

CREATE TABLE lake.metrics_per_minute (
  minute TIMESTAMPTZ NOT NULL,
  kind STRING,
  events BIGINT,
  users BIGINT,
  approx_users BIGINT,
  first_id BIGINT,
  last_id BIGINT
) PARTITIONED BY (day(minute));

-- Running totals per kind: one row per kind, replaced at every commit that changes it.
CREATE TABLE lake.totals_by_kind (
  kind STRING NOT NULL,
  events BIGINT,
  users BIGINT,
  last_id BIGINT,
  PRIMARY KEY (kind)
);

CREATE SOURCE events_in (id BIGINT, user_id BIGINT, kind STRING, ts TIMESTAMPTZ,
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND)
  WITH (connector = 'http') FORMAT JSON;

CREATE PIPELINE load_events WITH (commit_interval = '1s') AS
  INSERT INTO lake.events SELECT id, user_id, kind, ts FROM events_in;

CREATE PIPELINE minute_metrics WITH (commit_interval = '1s') AS
  INSERT INTO lake.metrics_per_minute
  SELECT window_start, kind, count(*), count(DISTINCT user_id), approx_count_distinct(user_id),
         min(id), max(id)
  FROM TUMBLE(events_in, ts, INTERVAL '1' MINUTE)
  WHERE kind IS NOT NULL
  GROUP BY window_start, window_end, kind;

CREATE PIPELINE kind_totals WITH (commit_interval = '1s') AS
  INSERT INTO lake.totals_by_kind
  SELECT kind, count(*), count(DISTINCT user_id), max(id)
  FROM events_in
  WHERE kind IS NOT NULL
  GROUP BY kind;
