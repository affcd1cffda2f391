"""Running plugin code without handing it the caller: deadlines on daemon worker threads (``executor``), the
bridges between sync and async code (``asyncbridge``), and the guards that keep plugin code from ending or
interrupting its caller (``exitguard``) or silencing its output (``streams``).

Knows nothing of tools or plugins: may import ``errors`` only.
"""
