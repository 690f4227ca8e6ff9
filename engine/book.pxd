# Static types for engine/book.py when compiled (setup.py): the byte scanner runs as C.
cimport cython

cdef Py_ssize_t _QUOTE, _MINUS, _DOT, _ZERO, _NINE, _ONE

@cython.locals(k=Py_ssize_t, j=Py_ssize_t)
cdef Py_ssize_t _literal(bytes raw, Py_ssize_t i, Py_ssize_t n, bytes lit)

@cython.locals(start=Py_ssize_t)
cdef Py_ssize_t _decimal(bytes raw, Py_ssize_t i, Py_ssize_t n)

@cython.locals(end=Py_ssize_t)
cdef Py_ssize_t _integer(bytes raw, Py_ssize_t i, Py_ssize_t n)

cdef Py_ssize_t _level(bytes raw, Py_ssize_t i, Py_ssize_t n, int form)

cdef Py_ssize_t _side(bytes raw, Py_ssize_t i, Py_ssize_t n, int form)

@cython.locals(n=Py_ssize_t, i=Py_ssize_t, form=int)
cpdef bint scan_fast_form(bytes raw)

@cython.locals(n=Py_ssize_t, i=Py_ssize_t, e=Py_ssize_t, form=int)
cpdef object scan_tops(bytes raw)
