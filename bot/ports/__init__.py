"""The boundary between the application and the outside world, and all of bot/ an adapter may import.

`protocols` states, as Protocols in one module, what the application needs from outside — commit
sources and the store they keep commits in, the LLM client, chat posters, the chart renderer, a clock
— and what the chat adapters may call: the chat facade, with the data its calls carry. Adapters
implement these and import nothing else of bot/. Beside them, the few helpers both sides share:
secret masking for every line we print (`secrets`) and listening sockets a flood cannot take down
(`listener`). Concrete adapters are built in one place only: bot/app.py, the composition root.
"""
