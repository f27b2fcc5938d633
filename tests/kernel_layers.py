"""The compiled search kernel's modules in layers, lowest first: each imports only lower ones
(``test_architecture``), and each is compiled once (``service/test_kernels``). ``batch``, the entry points,
sits above them all."""

SEARCH_KERNEL = (
    "status",
    "bundles",
    "keys",
    "memo",
    "prune",
    "order",
    "generate",
    "islands",
    "open_blocks",
    "gather",
    "dfs",
    "best_n",
    "progress",
)
