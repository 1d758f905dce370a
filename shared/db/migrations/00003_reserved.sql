-- Placeholder that keeps migration numbers consecutive on branch h-pricing: another branch owns
-- 00003. Delete this file when that branch's 00003 is merged (postgres-shift refuses gaps).
select 1;
