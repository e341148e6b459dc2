"""Tool chains: named, declarative sequences of tool calls written in YAML (no framework imports).

:mod:`.spec` reads and checks a chain file, :mod:`.expr` resolves its references and
conditions, :mod:`.catalog` finds the chain files. The chain's graph (one node per step)
is in ``graphs/chain.py``; the feature that offers chains as tools in ``features/chains.py``.
"""
