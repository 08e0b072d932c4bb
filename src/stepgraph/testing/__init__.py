"""Testing kits shipped with stepgraph.

* ``stepgraph.testing.saver_conformance``: a pytest suite any checkpoint saver can run
  (subclass ``SaverConformance`` and provide a ``saver`` fixture).
"""
