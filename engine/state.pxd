# Static types for engine/state.py when compiled (setup.py): the state is C structs of
# Python objects (exact integers however large), read by the compiled rules without a
# dictionary look-up. Every attribute stays public: a shell reads them as before.

cdef class OpenOrder:
    cdef public object oid, entry, asset, is_buy, limit_px, sz, reduce_only, tif, cloid
    cdef public object received, reserve, state, filled, act_book_time, cancel_at


cdef class AssetState:
    cdef public object coin, asset, sz_decimals, lot, ctx_mark, book_mid, mid_book, book
    cdef public object trade_px, oracle, funding, last_trade_time
    cdef public set last_trade_tids
    cdef public list pending, resting


cdef class Account:
    cdef public object name, idx, key_sha256, cash, reserved, peak, fee_hwm, mdd, paused
    cdef public object marks, active_marks, last_equity, standing
    cdef public dict positions, orders
    cdef public set fill_days
