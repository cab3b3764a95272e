"""The signer: the one process that holds the custody key (docs/engine-treasury.md, The signer).

- policy.py: which transactions may be signed (a pure function of the transaction and the facts);
- facts.py: those facts, read from the engine database by the signer itself;
- store.py: signer.db, the signer's own state beside the key (schema, administrator token);
- own_policy.py: its own limits, allow-lists, fee ceilings and keys, with delayed loosenings;
- journal.py: the append-only, hash-chained journal of every signature;
- bounds.py: what the own state allows (fee bounds, one payload per nonce, payout limits, signatures);
- commands.py: the administrator's commands on that state; admin.py: their client (the CLI's side);
- answers.py: the answer to one request of the socket;
- core.py: Signer (facts, policy, own state, signature, journal) and LocalSigner (the same in the
  caller's process);
- wire.py: the socket's protocol (length-prefixed JSON);
- process.py: the signer process (a Unix socket in the data directory, no network);
- client.py: what serving processes and workers hold instead of the key;
- supervisor.py: `serve` starts, watches and restarts the signer process.
"""
