-- GET /v2/business/wallet/transactions?type=credit (or refund) walked the business's ledger newest
-- first and dropped the debits, one per placement, until a page was full: a business that tops up
-- once a week read every debit between its top-ups, and the whole ledger, which is kept for good,
-- for a kind it never had. Credits and refunds are indexed apart, and only they, so a placement's
-- debit writes nothing more. listLedger (shared/db/wallets.ts) names the set in the statement's
-- text, so a prepared statement's generic plan can use the index too.
create index ledger_credits_refunds on ledger_entries (business_id, livemode, id desc)
  where kind in ('credit', 'refund');
