-- The embedded default: events POSTed over HTTP land in lake.events, exactly once,
-- committed every second. Run: sluice run examples/events.sql --listen 127.0.0.1:8080
CREATE TABLE lake.events (
  id BIGINT NOT NULL,
  user_id BIGINT,
  kind STRING,
  ts TIMESTAMPTZ
) PARTITIONED BY (day(ts)) WITH ('format-version' = '2');

CREATE SOURCE events_in (id BIGINT, user_id BIGINT, kind STRING, ts TIMESTAMPTZ)
  WITH (connector = 'http') FORMAT JSON;

CREATE PIPELINE load_events WITH (commit_interval = '1s') AS
  INSERT INTO lake.events SELECT id, user_id, kind, ts FROM events_in;
