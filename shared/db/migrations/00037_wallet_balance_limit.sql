-- No ceiling held a wallet's balance, and bigint columns are read as plain numbers: past 2^53
-- kobo a balance, and the balance_after computed from it, would no longer add up to the kobo.
-- Credits stop at 10^15 kobo (ten trillion naira, WALLET_MAX_KOBO in shared/db/wallets.ts, where
-- every amount is still exact as a JSON number); refunds may take a balance past it (they return
-- what was debited, and must never fail), so the database holds the bound where exactness ends.
alter table wallets add constraint wallet_balance_exact check (balance <= 9007199254740991);
