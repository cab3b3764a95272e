"""The signer: the one process that holds the custody key (docs/engine-treasury.md, The signer).

- policy.py: which transactions may be signed (a pure function of the transaction and the facts);
- facts.py: those facts, read from the engine database by the signer itself;
- core.py: Signer (facts, policy, signature) and LocalSigner (the same in the caller's process);
- wire.py: the socket's protocol (length-prefixed JSON);
- process.py: the signer process (a Unix socket in the data directory, no network);
- client.py: what serving processes and workers hold instead of the key;
- supervisor.py: `serve` starts, watches and restarts the signer process.
"""
