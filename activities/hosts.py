"""The worker hosts polling for work now: what the Docker backend's admission counts.

Every worker polls the shared task queue under an identity ending ``@<host id>``
(:func:`runtime.orphans.worker_identity`); Temporal lists the pollers it saw in the last
minutes. A host that just died may still be listed for a while, and one about to start
is not: the count proposes ``--parallel``, it enforces nothing (each host's admission
does that).
"""

from __future__ import annotations

from temporalio.api.enums.v1 import TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
from temporalio.client import Client
from temporalio.service import RPCError

from durabench.logs import get_logger
from durabench.settings.values import Settings

__all__ = ["hosts_polling"]

log = get_logger("durabench.hosts")


async def hosts_polling(client: Client | None, settings: Settings) -> tuple[str, ...]:
    """Host ids of the workers polling the shared queue's activities, this one included.

    A server that cannot answer leaves this host alone, logged: the plan still stands.
    """
    hosts = {settings.host_id}
    if client is None:
        return tuple(hosts)
    request = DescribeTaskQueueRequest(
        namespace=client.namespace,
        task_queue=TaskQueue(name=settings.task_queue),
        task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
    )
    try:
        answer = await client.workflow_service.describe_task_queue(request)
    except RPCError as exc:
        log.warning("listing the worker hosts failed; counting this one", error=str(exc))
        return tuple(hosts)
    for poller in answer.pollers:
        _, at, host = poller.identity.rpartition("@")
        if at and host:
            hosts.add(host)
    return tuple(sorted(hosts))
