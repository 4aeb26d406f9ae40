"""A deployment of foldkit-agent past one process: nginx routing each tenant to one of N
``foldkit-agent serve`` workers, PostgreSQL for the todos and the audit (docs/deploy.md).

``python -m deploy`` tries it on one machine; :mod:`deploy.stack` starts it (the tests and
the bench drive it); ``deploy/nginx.conf`` is the proxy's configuration.
"""
