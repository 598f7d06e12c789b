-- Status badges (/v1/badges/…) are public SVGs; like the anchor's, an account serves them only once it turns them
-- on (PATCH /v1/account {"badgesEnabled": true}, an admin key). Off by default: group ids are sequential, so
-- public group badges would let anyone count through every account's group names and states.
alter table accounts add column badges_enabled boolean not null default false;
