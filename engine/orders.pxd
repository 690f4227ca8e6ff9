# Static types for engine/orders.py when compiled (setup.py): see engine/state.pxd.
cimport cython

from engine.state cimport Account, AssetState, OpenOrder


# check() stays untyped: Cython 3.3 cannot translate its generator expression in a cpdef
@cython.locals(order=OpenOrder)
cpdef place(eng, Account acct, o, t)

@cython.locals(acct=Account, a=AssetState)
cpdef close(eng, OpenOrder order, t, reason)
