"""Regenerates the reference .npy files read by xla-props' literal tests.

Made with: pip install numpy==2.4.6 ml_dtypes==0.6.0; python3 make_npy.py
"""
import numpy as np
import ml_dtypes

np.save("f32_2x3.npy", np.arange(6, dtype="<f4").reshape(2, 3) - 2.5)
np.save("f64_specials.npy", np.array([np.nan, -np.nan, np.inf, -np.inf, -0.0, 5e-324, 1.5], dtype="<f8"))
np.save("f16_be.npy", np.array([1.0, -2.0, 65504.0, 2.0**-24], dtype=">f2"))
np.save("i32_fortran_2x3x2.npy", np.asfortranarray(np.arange(12, dtype="<i4").reshape(2, 3, 2)))
np.save("u16_be.npy", np.array([1, 0x1234, 0xFFFF], dtype=">u2"))
np.save("u64_max.npy", np.array([0, 2**64 - 1], dtype="<u8"))
np.save("i64_min.npy", np.array([-(2**63), -1], dtype="<i8"))
np.save("bool_2x2.npy", np.array([[True, False], [False, True]]))
np.save("i8_scalar.npy", np.array(-7, dtype="i1"))
np.save("f32_0x3.npy", np.zeros((0, 3), dtype="<f4"))
np.save("bf16_mldtypes.npy", np.array([1.0, -0.5, np.inf, np.nan], dtype=ml_dtypes.bfloat16))
np.save("f8e4m3fn_mldtypes.npy", np.array([448.0, -0.015625, np.nan, 0.001953125], dtype=ml_dtypes.float8_e4m3fn))
np.save("f8e5m2_mldtypes.npy", np.array([57344.0, -np.inf, 1.5, 2.0**-16], dtype=ml_dtypes.float8_e5m2))
np.save("s4_mldtypes.npy", np.array([-8, -1, 0, 7], dtype=ml_dtypes.int4))
np.save("u4_mldtypes.npy", np.array([0, 15, 9], dtype=ml_dtypes.uint4))
np.save("bf16_named.npy", np.array([3.0, -1.0], dtype=ml_dtypes.bfloat16).view(np.dtype([("bfloat16", "V2")])))
