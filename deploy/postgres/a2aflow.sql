-- Run once by the postgres image when its data volume is first created
-- (docker-entrypoint-initdb.d): a2aflow's own records (the agent directory,
-- bookings) get a database of their own beside Temporal's.
CREATE DATABASE a2aflow OWNER temporal;
