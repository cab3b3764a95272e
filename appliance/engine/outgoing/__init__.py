"""Every transaction the payout engine sends, on one lifecycle: payouts, sweeps, gas top-ups and
cancellations alike (issue 42).

- transactions: a nonce reservation (wallet, nonce) is reserved, signed and stored in ONE write
  transaction (reserve_and_sign); every payload ever signed at it is kept; replacements and
  adoptions of bytes found on chain.
- state: the broadcast's statuses (signed, sent, mined, final) and their table of legal moves;
  one compare-and-set transition() records each move in the same transaction.
- follow: receipts and confirmations, reorgs, sends again, fee bumps, a used nonce looked up.
- fees: the fee arithmetic (base fee, ceiling, bump, gas margin), written once.
- fencing: the nonce fencing: signing for a wallet only while the chain's use of its nonces,
  mined and pending, is accounted for by bytes the engine holds; anything else fences the wallet
  and waits for an administrator (payouts.foreign: adopt or reject-foreign).
- topups: the fee wallet's gas top-ups, for payouts and sweeps.

What each transaction pays for (a payout's status, a sweep's row) moves in its own package, in the
transaction of the broadcast's move.
"""
