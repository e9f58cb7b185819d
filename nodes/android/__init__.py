"""Android devices over adb: the client, device choice, and the collections the node runs.

Everything here talks to a device only through :class:`nodes.android.adb.Adb`, which puts a
timeout on every call and turns adb's own failures into typed errors the policies understand.
"""
