"""Regenerate the NumPy-written test files (run: python3 gen.py).

Each array holds v[i, j, t] = 100*i + 10*j + t (or v[i] = i - 2 for vectors),
so the tests can check every element by formula.
"""
import numpy as np

c = np.fromfunction(lambda i, j, t: 100 * i + 10 * j + t, (2, 3, 4))
np.save("c_f8.npy", c.astype("<f8"))
np.save("fortran_f4.npy", np.asfortranarray(c.astype("<f4")))
np.save("fortran_f8_be.npy", np.asfortranarray(c.astype(">f8")))
np.save("c_i2.npy", c.astype("<i2"))
np.save("vec_i8.npy", np.arange(5, dtype="<i8") - 2)
np.save("vec_bool.npy", np.array([True, False, True]))
np.save("col_f8.npy", (np.arange(5, dtype="<f8") - 2).reshape(5, 1))
