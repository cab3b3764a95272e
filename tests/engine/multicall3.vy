# pragma version ~=0.4.3
"""The read-only part of Multicall3 (aggregate3 and getEthBalance, the same selectors and ABI),
for test nodes that have no Multicall3 at 0xcA11bde05977b3631167028862bE2a173976CA11: the tests
install its runtime code there with anvil_setCode. Bounded to what balance reads need."""

struct Call3:
    target: address
    allowFailure: bool
    callData: Bytes[68]

struct Result:
    success: bool
    returnData: Bytes[32]


@external
def aggregate3(calls: DynArray[Call3, 1000]) -> DynArray[Result, 1000]:
    out: DynArray[Result, 1000] = []
    for c: Call3 in calls:
        ok: bool = False
        data: Bytes[32] = b""
        ok, data = raw_call(c.target, c.callData, max_outsize=32, revert_on_failure=False, is_static_call=True)
        assert ok or c.allowFailure, "Multicall3: call failed"
        out.append(Result(success=ok, returnData=data))
    return out


@view
@external
def getEthBalance(addr: address) -> uint256:
    return addr.balance
