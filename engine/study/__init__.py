"""A study with people: the study file (``spec``), its design as cells and the rule that balances
who plays what (``design``), and the journal a study server keeps so that it survives a restart
(``ledger``). Plain code with no server in it: ``runners.study`` serves the study."""
