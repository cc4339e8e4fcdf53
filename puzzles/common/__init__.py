"""What every game uses beyond the contract (``puzzles.base``): ``replay``, the replay's side of the
contract and the lines and tables (``Span``, ``Board``) that replays and seats draw with. What only
some games share lives in a folder named for them (``puzzles.positions``: AsymPuzl and the chain puzzle).
"""
