"""The system services a Horizon program reaches through sm: (one module each), served by the
CPU host over IPC (``cpu_host/horizon/ipc``).  They share their state with the nn:: symbol HLE
(``cpu_host/horizon/hle``): one hid, one settings/applet state, one clock.

``host.make_server`` registers them all; the order libnx's default start-up (``__appInit``)
asks for them is sm:, set:sys (firmware version), appletOE (with apm), hid, time:u, fsp-srv.
Command ids and layouts from switchbrew's service pages and libnx's ``source/services``
(read, never copied)."""
