"""The metric engine: numba kernels that rank each user's items and count what every metric
needs, the driver's one loop over blocks of users, and the CUDA backend beside it. Knows nothing
of pandas, Hydra or MLflow."""
