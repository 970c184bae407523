"""``python -m durabench.gateway``: the gateway's own process (see :mod:`.process`)."""

from durabench.gateway.process import main

main()
