"""What an operator sees: logs with every configured secret masked (`logs`), Prometheus metrics and
/healthz (`metrics`), and listening sockets a connection flood cannot take down (`listener`)."""
