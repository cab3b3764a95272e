# pragma version 0.4.3
# @title USDC of the appliance's embedded chain (eth_local)
# @notice A plain ERC20 with 6 decimals. Only the minter (the local chain's faucet account, which
#         deploys it in block 1) can create supply; transfers follow ERC20 exactly (Transfer logs,
#         revert on insufficient balance or allowance, checked arithmetic).
# @license MIT

from ethereum.ercs import IERC20

implements: IERC20

event Transfer:
    sender: indexed(address)
    receiver: indexed(address)
    value: uint256

event Approval:
    owner: indexed(address)
    spender: indexed(address)
    value: uint256

name: public(constant(String[32])) = "USD Coin (appliance local)"
symbol: public(constant(String[8])) = "USDC"
decimals: public(constant(uint8)) = 6

balanceOf: public(HashMap[address, uint256])
allowance: public(HashMap[address, HashMap[address, uint256]])
totalSupply: public(uint256)
minter: public(immutable(address))


@deploy
def __init__():
    minter = msg.sender


@external
def transfer(receiver: address, amount: uint256) -> bool:
    self._transfer(msg.sender, receiver, amount)
    return True


@external
def transferFrom(owner: address, receiver: address, amount: uint256) -> bool:
    self.allowance[owner][msg.sender] -= amount
    self._transfer(owner, receiver, amount)
    return True


@external
def approve(spender: address, amount: uint256) -> bool:
    self.allowance[msg.sender][spender] = amount
    log Approval(owner=msg.sender, spender=spender, value=amount)
    return True


@external
def mint(receiver: address, amount: uint256) -> bool:
    assert msg.sender == minter, "only the minter mints"
    assert receiver != empty(address), "mint to the zero address"
    self.totalSupply += amount
    self.balanceOf[receiver] += amount
    log Transfer(sender=empty(address), receiver=receiver, value=amount)
    return True


@internal
def _transfer(owner: address, receiver: address, amount: uint256):
    assert receiver != empty(address), "transfer to the zero address"
    self.balanceOf[owner] -= amount
    self.balanceOf[receiver] += amount
    log Transfer(sender=owner, receiver=receiver, value=amount)
