# pragma version 0.4.3
# @title A fee-on-transfer ERC20 for the payout engine's tests (issue 44, item 6)
# @notice Like USDT with its fee switch on, or PAXG: every transfer takes FEE_BPS basis points of
#         the amount from what the receiver gets and credits it to the fee collector (the deployer),
#         logging Transfer(sender, receiver, amount - fee) and Transfer(sender, collector, fee). The
#         sender's balance goes down by the whole amount. Compiled by
#         `python -m tests.engine.contracts.compile` (vyper 0.4.3, cancun) into fee_token.json.
# @license MIT

event Transfer:
    sender: indexed(address)
    receiver: indexed(address)
    value: uint256

FEE_BPS: constant(uint256) = 100  # 1 %

decimals: public(constant(uint8)) = 6
balanceOf: public(HashMap[address, uint256])
totalSupply: public(uint256)
collector: public(immutable(address))


@deploy
def __init__():
    collector = msg.sender


@external
def mint(receiver: address, amount: uint256) -> bool:
    assert msg.sender == collector, "only the deployer mints"
    self.totalSupply += amount
    self.balanceOf[receiver] += amount
    log Transfer(sender=empty(address), receiver=receiver, value=amount)
    return True


@external
def transfer(receiver: address, amount: uint256) -> bool:
    assert receiver != empty(address), "transfer to the zero address"
    fee: uint256 = amount * FEE_BPS // 10000
    self.balanceOf[msg.sender] -= amount
    self.balanceOf[receiver] += amount - fee
    self.balanceOf[collector] += fee
    log Transfer(sender=msg.sender, receiver=receiver, value=amount - fee)
    if fee > 0:
        log Transfer(sender=msg.sender, receiver=collector, value=fee)
    return True
