-- Status-page subscribers who confirmed themselves (the link of their confirm mail) against those an Admin imported
-- verified (autoVerify): an imported subscriber who never confirmed gets at most a few incident and maintenance
-- mails a day (docs/status-pages.md, "Subscribers").
alter table status_page_subscriptions add column confirmed_at timestamptz;
-- Confirming set updated_at; an import never did.
update status_page_subscriptions set confirmed_at = updated_at where status = 'VERIFIED' and updated_at is not null;
create index status_page_mails_subscription on status_page_mails (subscription_id, created_at);
