"""The embedded chain eth_local answering standard Ethereum JSON-RPC on a loopback port (setting
``local_rpc_port``), so that a wallet, ``cast`` or web3 can look at the demo's money.

Why this shape:
- Read-mostly and local: it listens on 127.0.0.1 only, answers the methods a wallet or ``cast``
  needs to read balances, blocks, receipts and logs, and ``eth_sendRawTransaction`` puts a signed
  transaction into the same pool the engine's payouts go to (the miner of ``serve`` includes it).
  No account is unlocked here and nothing is signed: the chain carries no value (its faucet key is
  public), but the appliance's own keys never come near it.
- Every serving process of ``serve`` runs this worker; the first to bind the port answers and the
  others try again every few seconds (so one answers again soon after its holder stops).
- State is read at any block: the chain keeps every trie node (nothing is pruned).
- Bounded for whoever can reach the port (a local process, or a web page the administrator has
  open, which a browser lets POST to loopback): a request with a foreign ``Origin`` or a body that
  is not declared JSON is refused before it is read (a page cannot send ``application/json``
  cross-origin without a preflight, which is never granted here); ``eth_call`` and
  ``eth_estimateGas`` run with at most ``RpcLimits.gas_cap`` gas (30 M, the block's limit, is
  about 10 s of a core in py-evm); a transaction sent here joins the pool only while the pool, the
  sender's share of it and the sender's nonce gap stay under their caps (a pool row stays until
  the miner can run it).
"""

from __future__ import annotations

import errno
import json
import logging
import socketserver
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from eth.constants import ZERO_ADDRESS
from eth.vm.spoof import SpoofTransaction
from eth_utils import to_checksum_address
from werkzeug.wrappers import Request, Response

from appliance import __version__
from appliance.engine.chain.base import TransactionRejected
from appliance.engine.chain.estimate import EstimateFailed, least_gas
from appliance.engine.chain.local import (
    NETWORK_ID,
    PRIORITY_FEE,
    LocalChain,
    _contract_address,
    _status_ok,
)
from appliance.settings import DEFAULT_LOCAL_RPC_GAS_CAP

log = logging.getLogger("appliance.engine.chain.local_rpc")

MAX_BODY = 1 << 20  # one JSON-RPC request (or batch) is at most 1 MiB
MAX_BATCH = 100
MAX_LOG_BLOCKS = 10_000  # eth_getLogs walks at most this many blocks per call
RETRY_BIND_SECONDS = 5.0

# The content types a JSON-RPC body may declare (geth's list): anything else, a form or text/plain
# above all (what a web page may POST to another origin without asking), is refused unread.
JSON_TYPES = frozenset({"application/json", "application/json-rpc", "application/jsonrequest"})
# Browser extensions (a wallet such as MetaMask) send their own origin; a web page cannot take one.
EXTENSION_SCHEMES = ("chrome-extension://", "moz-extension://", "safari-web-extension://")
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
# eth_estimateGas runs at most this many times the gas cap in all (a search cut short answers the
# least gas seen to succeed: never too little).


@dataclass(frozen=True)
class RpcLimits:
    """What one caller of the port may make this process do (docs/engine-payouts.md, Looking with
    standard tools)."""

    gas_cap: int = DEFAULT_LOCAL_RPC_GAS_CAP  # most gas an eth_call or eth_estimateGas runs with
    pool_transactions: int = 1024  # the pool's rows, whoever sent them
    pool_bytes: int = 16 << 20  # the pool's raw transactions, in bytes
    per_sender: int = 64  # one sender's transactions waiting in the pool
    nonce_gap: int = 16  # how far past its next runnable nonce a sender may queue a transaction
    transaction_bytes: int = 128 << 10  # one raw transaction (geth's limit)


# JSON-RPC 2.0 error codes, and the ones Ethereum nodes use.
PARSE_ERROR, INVALID_REQUEST, NO_METHOD, INVALID_PARAMS, SERVER_ERROR = -32700, -32600, -32601, -32602, -32000
REVERTED = 3


class RpcError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _hex(value: int) -> str:
    return hex(int(value))


def _bytes_hex(value: bytes) -> str:
    return "0x" + bytes(value).hex()


def _quantity(value: Any, name: str) -> int:
    if isinstance(value, str) and value.startswith(("0x", "0X")):
        try:
            return int(value, 16)
        except ValueError:
            pass
    raise RpcError(INVALID_PARAMS, f"{name} must be a 0x-prefixed hex quantity")


def _data(value: Any, name: str) -> bytes:
    if value is None:
        return b""
    if isinstance(value, str) and value.startswith(("0x", "0X")):
        try:
            return bytes.fromhex(value[2:])
        except ValueError:
            pass
    raise RpcError(INVALID_PARAMS, f"{name} must be 0x-prefixed hex bytes")


def _address(value: Any, name: str) -> bytes:
    raw = _data(value, name)
    if len(raw) != 20:
        raise RpcError(INVALID_PARAMS, f"{name} must be a 20-byte address")
    return raw


def foreign_origin(origin: str | None, port: int) -> bool:
    """True for a request a web page of another origin sent. Browsers send Origin on every
    cross-origin POST (and on same-origin ones); command-line tools send none. The port's own
    origin is its loopback address with its real port (never the Host header, which a page that
    rebinds its name to 127.0.0.1 chooses)."""
    if origin is None:
        return False
    if origin.startswith(EXTENSION_SCHEMES):
        return False
    return origin not in {f"http://{name}:{port}" for name in LOOPBACK_NAMES}


def declared_json(content_type: str | None) -> bool:
    media = (content_type or "").split(";", 1)[0].strip().lower()
    return media in JSON_TYPES


class LocalRpc:
    """The JSON-RPC methods over one LocalChain."""

    def __init__(self, chain: LocalChain, limits: RpcLimits | None = None) -> None:
        self.chain = chain
        self.limits = limits or RpcLimits()
        self.methods: dict[str, Callable[..., Any]] = {
            "web3_clientVersion": lambda: f"appliance-eth_local/{__version__}",
            "net_version": lambda: str(NETWORK_ID),
            "net_listening": lambda: True,
            "eth_chainId": lambda: _hex(NETWORK_ID),
            "eth_syncing": lambda: False,
            "eth_accounts": lambda: [],
            "eth_blockNumber": self.block_number,
            "eth_gasPrice": lambda: _hex(self.chain.fee_quote().max_fee_per_gas),
            "eth_maxPriorityFeePerGas": lambda: _hex(PRIORITY_FEE),
            "eth_getBalance": self.get_balance,
            "eth_getTransactionCount": self.get_transaction_count,
            "eth_getCode": self.get_code,
            "eth_call": self.call,
            "eth_estimateGas": self.estimate_gas,
            "eth_sendRawTransaction": self.send_raw_transaction,
            "eth_getTransactionByHash": self.get_transaction_by_hash,
            "eth_getTransactionReceipt": self.get_transaction_receipt,
            "eth_getBlockByNumber": self.get_block_by_number,
            "eth_getBlockByHash": self.get_block_by_hash,
            "eth_getLogs": self.get_logs,
        }

    # -- dispatch --------------------------------------------------------------------------------

    def answer(self, message: Any) -> dict[str, Any] | None:
        """One request object's response (None for a notification, which gets none)."""
        notification = isinstance(message, dict) and "id" not in message
        ident = message.get("id") if isinstance(message, dict) else None
        try:
            if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
                raise RpcError(INVALID_REQUEST, "not a JSON-RPC 2.0 request object")
            method, params = message.get("method"), message.get("params", [])
            if not isinstance(method, str) or not isinstance(params, list):
                raise RpcError(INVALID_REQUEST, "method must be a string and params a list")
            handler = self.methods.get(method)
            if handler is None:
                raise RpcError(NO_METHOD, f"the method {method} does not exist or is not available")
            try:
                result = handler(*params)
            except (TypeError, KeyError) as exc:
                raise RpcError(INVALID_PARAMS, f"wrong parameters for {method}: {exc}") from None
        except RpcError as exc:
            error = {"code": exc.code, "message": exc.message}
            return None if notification else {"jsonrpc": "2.0", "id": ident, "error": error}
        except Exception as exc:  # a bug or a damaged chain file: an error object, never a 500
            log.exception("local JSON-RPC %s failed", message.get("method"))
            error = {"code": SERVER_ERROR, "message": str(exc)}
            return None if notification else {"jsonrpc": "2.0", "id": ident, "error": error}
        return None if notification else {"jsonrpc": "2.0", "id": ident, "result": result}

    def wsgi(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        request = Request(environ)
        if request.method != "POST":
            response = Response("POST a JSON-RPC 2.0 request\n", status=405, headers={"Allow": "POST"})
            return response(environ, start_response)
        if foreign_origin(request.headers.get("Origin"), int(environ.get("SERVER_PORT") or 0)):
            refused = "requests from another origin (a web page) are refused\n"
            return Response(refused, status=403)(environ, start_response)
        if not declared_json(request.headers.get("Content-Type")):
            refused = "send the JSON-RPC request with Content-Type: application/json\n"
            return Response(refused, status=415)(environ, start_response)
        if (request.content_length or 0) > MAX_BODY:
            return Response("request too large\n", status=413)(environ, start_response)
        try:
            message = json.loads(request.get_data(cache=False)[: MAX_BODY + 1])
        except ValueError:
            out: Any = {
                "jsonrpc": "2.0",
                "id": None,
                "error": {"code": PARSE_ERROR, "message": "parse error"},
            }
        else:
            if isinstance(message, list):
                if not message or len(message) > MAX_BATCH:
                    out = {
                        "jsonrpc": "2.0",
                        "id": None,
                        "error": {
                            "code": INVALID_REQUEST,
                            "message": f"a batch holds 1 to {MAX_BATCH} requests",
                        },
                    }
                else:
                    out = [a for a in (self.answer(m) for m in message) if a is not None]
            else:
                out = self.answer(message)
        if out is None or out == []:
            return Response(status=204)(environ, start_response)
        return Response(json.dumps(out), content_type="application/json")(environ, start_response)

    # -- blocks and state ------------------------------------------------------------------------

    def _header(self, chain: Any, tag: Any = "latest") -> Any:
        if tag in (None, "latest", "pending", "safe", "finalized"):
            return chain.get_canonical_head()
        number = 0 if tag == "earliest" else _quantity(tag, "block")
        try:
            return chain.get_canonical_block_header_by_number(number)
        except Exception:
            raise RpcError(SERVER_ERROR, f"block {number} is not on the chain yet") from None

    def block_number(self) -> str:
        return _hex(self.chain.head().number)

    def get_balance(self, address: str, tag: Any = "latest") -> str:
        chain, _ = self.chain._view()
        state = chain.get_vm(self._header(chain, tag)).state
        return _hex(state.get_balance(_address(address, "address")))

    def get_code(self, address: str, tag: Any = "latest") -> str:
        chain, _ = self.chain._view()
        state = chain.get_vm(self._header(chain, tag)).state
        return _bytes_hex(state.get_code(_address(address, "address")))

    def get_transaction_count(self, address: str, tag: Any = "latest") -> str:
        account = _address(address, "address")
        chain, _ = self.chain._view()
        nonce = int(chain.get_vm(self._header(chain, tag)).state.get_nonce(account))
        if tag == "pending":  # what the pool already holds of this sender counts too
            row = (
                self.chain._conn()
                .execute("SELECT MAX(nonce) FROM pool WHERE sender = ?", (account,))
                .fetchone()
            )
            if row[0] is not None:
                nonce = max(nonce, int(row[0]) + 1)
        return _hex(nonce)

    def _call_gas(self, call: dict[str, Any]) -> int:
        """The gas a call runs with: the caller's, up to the cap (the cap when none is given)."""
        cap = self.limits.gas_cap
        if not call.get("gas"):
            return cap
        gas = _quantity(call["gas"], "gas")
        if gas > cap:
            raise RpcError(
                INVALID_PARAMS,
                f"gas {gas} is above this node's cap for eth_call and eth_estimateGas ({cap}; "
                "the setting local_rpc_gas_cap)",
            )
        return gas

    def _spoof(self, chain: Any, header: Any, call: Any) -> SpoofTransaction:
        if not isinstance(call, dict):
            raise RpcError(INVALID_PARAMS, "the call must be an object")
        sender = _address(call["from"], "from") if call.get("from") else ZERO_ADDRESS
        to = _address(call["to"], "to") if call.get("to") else b""
        vm = chain.get_vm(header)
        tx = vm.create_unsigned_transaction(
            nonce=vm.state.get_nonce(sender),
            gas_price=0,
            gas=self._call_gas(call),
            to=to,
            value=_quantity(call["value"], "value") if call.get("value") else 0,
            data=_data(call.get("data", call.get("input")), "data"),
        )
        return SpoofTransaction(tx, from_=sender)

    def call(self, call: Any, tag: Any = "latest") -> str:
        with self.chain._snapshot():
            chain, _ = self.chain._view()
            header = self._header(chain, tag)
            try:
                return _bytes_hex(chain.get_transaction_result(self._spoof(chain, header, call), header))
            except RpcError:
                raise
            except Exception as exc:
                raise RpcError(REVERTED, f"execution reverted: {exc}") from None

    def estimate_gas(self, call: Any, tag: Any = "latest") -> str:
        with self.chain._snapshot():
            chain, _ = self.chain._view()
            header = self._header(chain, tag)
            spoof = self._spoof(chain, header, call)
            with chain.get_vm(header).in_costless_state() as state:
                try:
                    return _hex(least_gas(state, spoof, self.limits.gas_cap))
                except EstimateFailed as exc:
                    raise RpcError(SERVER_ERROR if exc.out_of_gas else REVERTED, str(exc)) from None

    def send_raw_transaction(self, raw: str) -> str:
        data = _data(raw, "transaction")
        if len(data) > self.limits.transaction_bytes:
            raise RpcError(SERVER_ERROR, f"oversized data: at most {self.limits.transaction_bytes} bytes")
        try:
            with self.chain._write() as conn:  # the caps and the admission, one write transaction
                self._make_room(conn, data)
                tx_hash = self.chain._admit(conn, data)
        except TransactionRejected as exc:
            raise RpcError(SERVER_ERROR, str(exc)) from None
        self.chain._wake.set()
        return tx_hash

    def _make_room(self, conn: Any, raw: bytes) -> None:
        """Refuse (TransactionRejected) a transaction the pool has no room for: past the sender's
        nonce gap, over the sender's share, over the pool's size, or priced under the base fee (it
        could never be mined and would hold its row for ever). A replacement (the same sender and
        nonce) or the same bytes again take no new room. An undecodable one is left to the
        admission, which says why."""
        chain, _ = self.chain._view()
        vm = chain.get_vm()
        try:
            tx = vm.get_transaction_builder().decode(raw)
            sender, nonce = tx.sender, int(tx.nonce)
        except Exception:
            return
        limits = self.limits
        if tx.max_fee_per_gas < chain.header.base_fee_per_gas:
            raise TransactionRejected(
                f"max fee per gas {tx.max_fee_per_gas} is below the base fee {chain.header.base_fee_per_gas}"
            )
        queued = [
            int(n)
            for (n,) in conn.execute("SELECT nonce FROM pool WHERE sender = ? ORDER BY nonce", (sender,))
        ]
        if nonce in queued:
            return
        runnable = int(vm.state.get_nonce(sender))
        for waiting in queued:  # the sender's next nonce counts what the pool already runs in turn
            if waiting == runnable:
                runnable += 1
        if nonce >= runnable + limits.nonce_gap:
            raise TransactionRejected(
                f"nonce too high: {nonce} is more than {limits.nonce_gap - 1} past the sender's next "
                f"nonce {runnable}"
            )
        if len(queued) >= limits.per_sender:
            raise TransactionRejected(f"txpool is full: this sender has {len(queued)} transactions waiting")
        count, size = conn.execute("SELECT COUNT(*), COALESCE(SUM(LENGTH(raw)), 0) FROM pool").fetchone()
        if count >= limits.pool_transactions or size + len(raw) > limits.pool_bytes:
            raise TransactionRejected(f"txpool is full ({count} transactions waiting); try again later")

    # -- transactions, receipts, blocks, logs ---------------------------------------------------

    def _located(self, chain: Any, tx_hash: str) -> tuple[Any, int] | None:
        key = _data(tx_hash, "transaction hash")
        try:
            number, index = chain.get_canonical_transaction_index(key)
        except Exception:
            return None
        return chain.get_canonical_block_by_number(number), index

    @staticmethod
    def _transaction(block: Any, index: int) -> dict[str, Any]:
        tx = block.transactions[index]
        base_fee = block.header.base_fee_per_gas
        typed = getattr(tx, "type_id", None)
        out: dict[str, Any] = {
            "hash": _bytes_hex(tx.hash),
            "blockHash": _bytes_hex(block.hash),
            "blockNumber": _hex(block.number),
            "transactionIndex": _hex(index),
            "from": to_checksum_address(tx.sender),
            "to": to_checksum_address(tx.to) if tx.to else None,
            "nonce": _hex(tx.nonce),
            "value": _hex(tx.value),
            "gas": _hex(tx.gas),
            "input": _bytes_hex(tx.data),
            "type": _hex(typed or 0),
            "chainId": _hex(NETWORK_ID),
            "r": _hex(tx.r),
            "s": _hex(tx.s),
        }
        if typed == 2:
            out["maxFeePerGas"] = _hex(tx.max_fee_per_gas)
            out["maxPriorityFeePerGas"] = _hex(tx.max_priority_fee_per_gas)
            out["gasPrice"] = _hex(min(tx.max_fee_per_gas, base_fee + tx.max_priority_fee_per_gas))
            out["accessList"] = []
            out["yParity"] = out["v"] = _hex(tx.y_parity)
        else:
            out["gasPrice"] = _hex(tx.gas_price)
            out["v"] = _hex(tx.v)
        return out

    def get_transaction_by_hash(self, tx_hash: str) -> dict[str, Any] | None:
        chain, _ = self.chain._view()
        found = self._located(chain, tx_hash)
        return None if found is None else self._transaction(*found)

    def get_transaction_receipt(self, tx_hash: str) -> dict[str, Any] | None:
        chain, _ = self.chain._view()
        found = self._located(chain, tx_hash)
        if found is None:
            return None
        block, index = found
        receipts = block.get_receipts(chain.chaindb)
        receipt, tx = receipts[index], block.transactions[index]
        previous = receipts[index - 1].gas_used if index else 0
        first_log = sum(len(r.logs) for r in receipts[:index])
        created = None if tx.to else _contract_address(to_checksum_address(tx.sender), tx.nonce)
        transaction = self._transaction(block, index)
        return {
            "transactionHash": transaction["hash"],
            "transactionIndex": _hex(index),
            "blockHash": transaction["blockHash"],
            "blockNumber": transaction["blockNumber"],
            "from": transaction["from"],
            "to": transaction["to"],
            "cumulativeGasUsed": _hex(receipt.gas_used),
            "gasUsed": _hex(receipt.gas_used - previous),
            "effectiveGasPrice": transaction["gasPrice"],
            "contractAddress": created,
            "logs": [self._log(block, index, first_log + n, entry) for n, entry in enumerate(receipt.logs)],
            "logsBloom": _bytes_hex(receipt.bloom.to_bytes(256, "big")),
            "status": "0x1" if _status_ok(receipt) else "0x0",
            "type": transaction["type"],
        }

    @staticmethod
    def _log(block: Any, tx_index: int, log_index: int, entry: Any) -> dict[str, Any]:
        return {
            "address": to_checksum_address(entry.address),
            "topics": ["0x" + topic.to_bytes(32, "big").hex() for topic in entry.topics],
            "data": _bytes_hex(entry.data),
            "blockNumber": _hex(block.number),
            "blockHash": _bytes_hex(block.hash),
            "transactionHash": _bytes_hex(block.transactions[tx_index].hash),
            "transactionIndex": _hex(tx_index),
            "logIndex": _hex(log_index),
            "removed": False,
        }

    def _block(self, chain: Any, block: Any, full: bool) -> dict[str, Any]:
        header = block.header
        transactions: list[Any] = [
            self._transaction(block, i) if full else _bytes_hex(tx.hash)
            for i, tx in enumerate(block.transactions)
        ]
        return {
            "number": _hex(header.block_number),
            "hash": _bytes_hex(header.hash),
            "parentHash": _bytes_hex(header.parent_hash),
            "nonce": _bytes_hex(header.nonce),
            "sha3Uncles": _bytes_hex(header.uncles_hash),
            "logsBloom": _bytes_hex(header.bloom.to_bytes(256, "big")),
            "transactionsRoot": _bytes_hex(header.transaction_root),
            "stateRoot": _bytes_hex(header.state_root),
            "receiptsRoot": _bytes_hex(header.receipt_root),
            "miner": to_checksum_address(header.coinbase),
            "difficulty": _hex(header.difficulty),
            "totalDifficulty": _hex(0),
            "extraData": _bytes_hex(header.extra_data),
            "size": _hex(len(block.encode()) if hasattr(block, "encode") else 0),
            "gasLimit": _hex(header.gas_limit),
            "gasUsed": _hex(header.gas_used),
            "timestamp": _hex(header.timestamp),
            "mixHash": _bytes_hex(header.mix_hash),
            "baseFeePerGas": _hex(header.base_fee_per_gas),
            "transactions": transactions,
            "uncles": [],
        }

    def get_block_by_number(self, tag: Any, full: bool = False) -> dict[str, Any] | None:
        chain, _ = self.chain._view()
        try:
            header = self._header(chain, tag)
        except RpcError:
            return None  # a block above the head: null, as nodes answer
        return self._block(chain, chain.get_block_by_header(header), bool(full))

    def get_block_by_hash(self, block_hash: str, full: bool = False) -> dict[str, Any] | None:
        chain, _ = self.chain._view()
        try:
            block = chain.get_block_by_hash(_data(block_hash, "block hash"))
        except Exception:
            return None
        return self._block(chain, block, bool(full))

    def get_logs(self, query: Any) -> list[dict[str, Any]]:
        if not isinstance(query, dict):
            raise RpcError(INVALID_PARAMS, "the filter must be an object")
        chain, _ = self.chain._view()
        if query.get("blockHash"):
            try:
                blocks = [chain.get_block_by_hash(_data(query["blockHash"], "blockHash"))]
            except Exception:
                raise RpcError(SERVER_ERROR, "unknown block") from None
        else:
            first = self._header(chain, query.get("fromBlock", "latest")).block_number
            last = self._header(chain, query.get("toBlock", "latest")).block_number
            if last - first >= MAX_LOG_BLOCKS:
                raise RpcError(SERVER_ERROR, f"query a range of at most {MAX_LOG_BLOCKS} blocks")
            blocks = [chain.get_canonical_block_by_number(n) for n in range(first, last + 1)]
        wanted = query.get("address")
        addresses = {_address(a, "address") for a in ([wanted] if isinstance(wanted, str) else wanted or [])}
        topics = query.get("topics") or []
        if not isinstance(topics, list):
            raise RpcError(INVALID_PARAMS, "topics must be a list")
        choices = [
            None
            if t is None
            else {int.from_bytes(_data(x, "topic"), "big") for x in ([t] if isinstance(t, str) else t)}
            for t in topics
        ]
        out = []
        for block in blocks:
            log_index = 0
            for tx_index, receipt in enumerate(block.get_receipts(chain.chaindb)):
                for entry in receipt.logs:
                    matches = (not addresses or entry.address in addresses) and len(entry.topics) >= len(
                        choices
                    )
                    if matches and all(c is None or entry.topics[i] in c for i, c in enumerate(choices)):
                        out.append(self._log(block, tx_index, log_index, entry))
                    log_index += 1
        return out


class _Server(socketserver.ThreadingMixIn, WSGIServer):
    daemon_threads = True  # a slow client never holds up the process's stop


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


def bind(
    chain: LocalChain, port: int, host: str = "127.0.0.1", limits: RpcLimits | None = None
) -> WSGIServer:
    """The JSON-RPC server bound (not yet serving); OSError when the port is taken. The standard
    library's server: werkzeug's development server exits the process on a taken port."""
    return make_server(
        host, port, LocalRpc(chain, limits).wsgi, server_class=_Server, handler_class=_QuietHandler
    )


def run_local_rpc(
    chain: LocalChain, port: int, stop: threading.Event, limits: RpcLimits | None = None
) -> None:
    """The worker of `serve`: answer on 127.0.0.1:port while the process runs; when another
    serving process holds the port, try again every few seconds."""
    told = False
    while not stop.is_set():
        try:
            server = bind(chain, port, limits=limits)
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE:
                log.warning("local JSON-RPC cannot listen on 127.0.0.1:%d: %s", port, exc)
            elif not told:
                log.info("local JSON-RPC port %d is answered by another process", port)
                told = True
            stop.wait(RETRY_BIND_SECONDS)
            continue
        log.info("eth_local answers JSON-RPC on http://127.0.0.1:%d", port)
        thread = threading.Thread(target=server.serve_forever, name="local-rpc", daemon=True)
        thread.start()
        stop.wait()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
