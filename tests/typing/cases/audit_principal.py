"""``audit_log(principal=...)`` (DESIGN §3's name) and ``record_principal=`` both type-check."""

from foldkit_agent import agent

by_name = agent.audit_log(capacity=10, principal=lambda who: who)
by_old_name = agent.audit_log(record_principal=lambda who: who)
