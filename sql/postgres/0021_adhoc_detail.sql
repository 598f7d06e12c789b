-- What an ad-hoc run saw, beside the result the CLI reads: the type's result object (request, response, assertions
-- with their actual values; a browser run's steps, console and errors) and the run's error line. The console's
-- "Run before saving" (POST /v1/check-runs/{type}) and a test session's result page show it.
alter table adhoc_runs add column detail jsonb;
