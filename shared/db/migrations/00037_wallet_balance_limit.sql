-- No ceiling held a wallet's balance, and bigint columns are read as plain numbers: past 2^53
-- kobo (about 90 trillion naira) a balance, and the balance_after computed from it, would no
-- longer add up to the kobo. A wallet now holds at most 10^15 kobo (ten trillion naira,
-- WALLET_MAX_KOBO in shared/db/wallets.ts), where every amount is still exact as a JSON number;
-- creditWallet refuses a credit past it before it gets here, and this check stands behind it.
alter table wallets add constraint wallet_balance_exact check (balance <= 1000000000000000);
