# pragma version 0.4.3
# @title A test token with EIP-2612 permit and EIP-3009 transferWithAuthorization
# @notice Outflows that use no nonce of the holder: a permit (an Approval signed off chain, then
#         transferFrom by anyone) and a transferWithAuthorization (a Transfer signed off chain,
#         sent by anyone). Decimals are set at deployment (a 30-decimal token too). Only the
#         deployer mints. Compiled by tests/engine/contracts/compile.py into permit_token.json.
# @license MIT

event Transfer:
    sender: indexed(address)
    receiver: indexed(address)
    value: uint256

event Approval:
    owner: indexed(address)
    spender: indexed(address)
    value: uint256

event AuthorizationUsed:
    authorizer: indexed(address)
    nonce: indexed(bytes32)

name: public(constant(String[32])) = "Permit Test Token"
symbol: public(constant(String[8])) = "PTT"
version: public(constant(String[8])) = "1"

decimals: public(uint8)
balanceOf: public(HashMap[address, uint256])
allowance: public(HashMap[address, HashMap[address, uint256]])
totalSupply: public(uint256)
nonces: public(HashMap[address, uint256])
authorizationState: public(HashMap[address, HashMap[bytes32, bool]])
minter: public(address)
DOMAIN_SEPARATOR: public(bytes32)

DOMAIN_TYPE_HASH: constant(bytes32) = keccak256(
    "EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"
)
PERMIT_TYPE_HASH: constant(bytes32) = keccak256(
    "Permit(address owner,address spender,uint256 value,uint256 nonce,uint256 deadline)"
)
TRANSFER_WITH_AUTHORIZATION_TYPE_HASH: constant(bytes32) = keccak256(
    "TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)"
)


@deploy
def __init__(token_decimals: uint8):
    self.minter = msg.sender
    self.decimals = token_decimals
    self.DOMAIN_SEPARATOR = keccak256(
        abi_encode(DOMAIN_TYPE_HASH, keccak256(name), keccak256(version), chain.id, self)
    )


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
    self._approve(msg.sender, spender, amount)
    return True


@external
def permit(owner: address, spender: address, amount: uint256, deadline: uint256, v: uint8, r: bytes32, s: bytes32):
    assert block.timestamp <= deadline, "permit expired"
    nonce: uint256 = self.nonces[owner]
    digest: bytes32 = keccak256(
        concat(
            b"\x19\x01",
            self.DOMAIN_SEPARATOR,
            keccak256(abi_encode(PERMIT_TYPE_HASH, owner, spender, amount, nonce, deadline)),
        )
    )
    assert owner != empty(address) and ecrecover(digest, v, r, s) == owner, "invalid permit"
    self.nonces[owner] = nonce + 1
    self._approve(owner, spender, amount)


@external
def transferWithAuthorization(
    sender: address,
    receiver: address,
    amount: uint256,
    valid_after: uint256,
    valid_before: uint256,
    nonce: bytes32,
    v: uint8,
    r: bytes32,
    s: bytes32,
):
    assert block.timestamp > valid_after, "authorization not yet valid"
    assert block.timestamp < valid_before, "authorization expired"
    assert not self.authorizationState[sender][nonce], "authorization used"
    digest: bytes32 = keccak256(
        concat(
            b"\x19\x01",
            self.DOMAIN_SEPARATOR,
            keccak256(
                abi_encode(
                    TRANSFER_WITH_AUTHORIZATION_TYPE_HASH,
                    sender,
                    receiver,
                    amount,
                    valid_after,
                    valid_before,
                    nonce,
                )
            ),
        )
    )
    assert sender != empty(address) and ecrecover(digest, v, r, s) == sender, "invalid signature"
    self.authorizationState[sender][nonce] = True
    log AuthorizationUsed(authorizer=sender, nonce=nonce)
    self._transfer(sender, receiver, amount)


@external
def mint(receiver: address, amount: uint256) -> bool:
    assert msg.sender == self.minter, "only the minter mints"
    self.totalSupply += amount
    self.balanceOf[receiver] += amount
    log Transfer(sender=empty(address), receiver=receiver, value=amount)
    return True


@internal
def _approve(owner: address, spender: address, amount: uint256):
    self.allowance[owner][spender] = amount
    log Approval(owner=owner, spender=spender, value=amount)


@internal
def _transfer(owner: address, receiver: address, amount: uint256):
    assert receiver != empty(address), "transfer to the zero address"
    self.balanceOf[owner] -= amount
    self.balanceOf[receiver] += amount
    log Transfer(sender=owner, receiver=receiver, value=amount)
