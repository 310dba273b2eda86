"""Provider modules: how to reach an endpoint (client, base URL, auth, api-version).

A direct provider builds the SDK client for its wire; a wrapper holds only what differs from
its contract parent. None of them knows a wire format.
"""
