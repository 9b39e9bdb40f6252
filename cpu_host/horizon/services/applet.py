"""appletOE / appletAE (am; switchbrew "Applet Manager services", libnx ``applet.c``).

appletOE 0 OpenApplicationProxy(u64 reserved, PID sent, copy handle: the process) ->
IApplicationProxy; appletAE 100/200/201/300/350 open the other proxies (served by the same
object here).  Proxy: 0 GetCommonStateGetter, 1 GetSelfController, 2 GetWindowController,
3 GetAudioController, 4 GetDisplayController, 10 GetProcessWindingController,
11 GetLibraryAppletCreator, 20 GetApplicationFunctions, 1000 GetDebugFunctions.

ICommonStateGetter: 0 GetEventHandle (copy handle, signalled while messages wait),
1 ReceiveMessage (u32; none waiting: 0x680 = am module 128, description 3), 5 GetOperationMode
(u8: 0 handheld, 1 console), 6 GetPerformanceMode (u32), 9 GetCurrentFocusState (u8: 1 in
focus), 60 GetDefaultDisplayResolution (s32 w, h).  The queue starts with FocusStateChanged
(15), as the system sends it to an application it starts; ExitRequested (4) follows when the
player closes the window or the run's frame budget is spent (shared with the nn::oe HLE).
ISelfController: 0 Exit, 1 LockExit, 2 UnlockExit, 9 GetLibraryAppletLaunchableEvent,
10 SetScreenShotPermission, 11/12 Set*ModeChangedNotification, 13 SetFocusHandlingMode,
14 SetRestartMessageEnabled, 16 SetOutOfFocusSuspendingEnabled, 40 CreateManagedDisplayLayer,
90/91 accumulated suspended tick.  IWindowController: 1 GetAppletResourceUserId,
10 AcquireForegroundRights.  IApplicationFunctions: 1 PopLaunchParameter (none: 0x680),
21 GetDesiredLanguage, 40 NotifyRunning, 22 SetTerminateResult, 66/67 game play recording."""

from __future__ import annotations

import logging
import threading
import time
from collections import deque

from cpu_host.horizon.hle.system import MESSAGE_EXIT_REQUEST, SystemService, language_code
from cpu_host.horizon.ipc.dispatcher import Context, Interface, Server, command
from cpu_host.horizon.ipc.results import IpcError, result

log = logging.getLogger("cpu_host.ipc.applet")
AM_NO_MESSAGE = result(128, 3)  # 0x680
MESSAGE_FOCUS_STATE_CHANGED = 15
FOCUS_IN_FOCUS = 1
APPLET_RESOURCE_USER_ID = 0x81  # the process's id stands for its applet resource user
RESOLUTION = {True: (1920, 1080), False: (1280, 720)}
WATCH_S = 1 / 60


class AppletState:
    """The applet's message queue and its event, one per process."""

    def __init__(self, kernel, system: SystemService) -> None:
        self.kernel, self.system = kernel, system
        self.messages: deque[int] = deque([MESSAGE_FOCUS_STATE_CHANGED])
        self.lock = threading.Lock()
        self.event = 0

    def event_handle(self) -> int:
        with self.lock:
            if not self.event:
                self.event = self.kernel.event()
                # an exit request comes from outside (window closed, frame budget spent): the
                # event is signalled when it does, for a guest polling or waiting on it
                threading.Thread(target=self._watch, name="applet-messages", daemon=True).start()
            self._update()
        return self.kernel.event_handle(self.event)

    def _watch(self) -> None:
        while not self.system.exit_sent:
            time.sleep(WATCH_S)
            with self.lock:
                self._update()

    def _update(self) -> None:
        s = self.system
        if (s.exit_requested or (s.max_frames and s.frames() >= s.max_frames)) and not s.exit_sent:
            s.exit_sent = True
            self.messages.append(MESSAGE_EXIT_REQUEST)
        if self.event:
            self.kernel.signal(self.event, bool(self.messages))

    def receive(self) -> int:
        with self.lock:
            self._update()
            if not self.messages:
                raise IpcError(AM_NO_MESSAGE, "no applet message waits")
            m = self.messages.popleft()
            self._update()
            return m


class Empty(Interface):
    """A controller whose commands the start-up does not call (unserved ones are named)."""

    service = "appletOE"

    def __init__(self, name: str) -> None:
        self.name = name


class CommonStateGetter(Interface):
    name = "nn::am::service::ICommonStateGetter"
    service = "appletOE"

    def __init__(self, st: AppletState) -> None:
        self.st = st

    @command(0)
    def get_event_handle(self, ctx: Context) -> None:
        ctx.out_copy.append(self.st.event_handle())

    @command(1)
    def receive_message(self, ctx: Context) -> None:
        ctx.push("I", self.st.receive())

    @command(5)
    def get_operation_mode(self, ctx: Context) -> None:
        ctx.push("B", 1 if self.st.system.docked else 0)

    @command(6)
    def get_performance_mode(self, ctx: Context) -> None:
        ctx.push("I", 1 if self.st.system.docked else 0)

    @command(9)
    def get_current_focus_state(self, ctx: Context) -> None:
        ctx.push("B", FOCUS_IN_FOCUS)

    @command(60)
    def get_default_display_resolution(self, ctx: Context) -> None:
        ctx.push("ii", *RESOLUTION[self.st.system.docked])


class SelfController(Interface):
    name = "nn::am::service::ISelfController"
    service = "appletOE"

    def __init__(self, st: AppletState) -> None:
        self.st = st
        self.layer = 0

    @command(0)
    def exit(self, ctx: Context) -> None:
        log.info("the application asked to exit (ISelfController::Exit)")

    def _accept(self, ctx: Context) -> None:
        pass

    lock_exit = command(1)(_accept)
    unlock_exit = command(2)(_accept)
    set_screenshot_permission = command(10)(_accept)
    set_operation_mode_notification = command(11)(_accept)
    set_performance_mode_notification = command(12)(_accept)
    set_focus_handling_mode = command(13)(_accept)
    set_restart_message_enabled = command(14)(_accept)
    set_out_of_focus_suspending = command(16)(_accept)
    set_idle_time_detection = command(62)(_accept)

    @command(9)
    def get_launchable_event(self, ctx: Context) -> None:
        ctx.out_copy.append(self.st.kernel.event_handle(self.st.kernel.event()))

    @command(40)
    def create_managed_display_layer(self, ctx: Context) -> None:
        self.layer += 1
        ctx.push("Q", self.layer)

    @command(90)
    def get_accumulated_suspended_tick(self, ctx: Context) -> None:
        ctx.push("Q", 0)

    @command(91)
    def get_accumulated_suspended_tick_event(self, ctx: Context) -> None:
        ctx.out_copy.append(self.st.kernel.event_handle(self.st.kernel.event()))


class WindowController(Interface):
    name = "nn::am::service::IWindowController"
    service = "appletOE"

    @command(1)
    def get_applet_resource_user_id(self, ctx: Context) -> None:
        ctx.push("Q", APPLET_RESOURCE_USER_ID)

    @command(10)
    def acquire_foreground_rights(self, ctx: Context) -> None:
        pass


class ApplicationFunctions(Interface):
    name = "nn::am::service::IApplicationFunctions"
    service = "appletOE"

    def __init__(self, st: AppletState) -> None:
        self.st = st

    @command(1)
    def pop_launch_parameter(self, ctx: Context) -> None:
        ctx.u32()
        raise IpcError(AM_NO_MESSAGE, "no launch parameter")

    @command(21)
    def get_desired_language(self, ctx: Context) -> None:
        ctx.push("Q", language_code(self.st.system.language))

    @command(22)
    def set_terminate_result(self, ctx: Context) -> None:
        log.info("terminate result %#x", ctx.u32())

    @command(40)
    def notify_running(self, ctx: Context) -> None:
        ctx.push("B", 0)

    @command(65)
    def is_game_play_recording_supported(self, ctx: Context) -> None:
        ctx.push("B", 0)


class ApplicationProxy(Interface):
    name = "nn::am::service::IApplicationProxy"
    service = "appletOE"

    def __init__(self, st: AppletState) -> None:
        self.st = st

    @command(0)
    def get_common_state_getter(self, ctx: Context) -> None:
        ctx.out_objects.append(CommonStateGetter(self.st))

    @command(1)
    def get_self_controller(self, ctx: Context) -> None:
        ctx.out_objects.append(SelfController(self.st))

    @command(2)
    def get_window_controller(self, ctx: Context) -> None:
        ctx.out_objects.append(WindowController())

    @command(3)
    def get_audio_controller(self, ctx: Context) -> None:
        ctx.out_objects.append(Empty("nn::am::service::IAudioController"))

    @command(4)
    def get_display_controller(self, ctx: Context) -> None:
        ctx.out_objects.append(Empty("nn::am::service::IDisplayController"))

    @command(10)
    def get_process_winding_controller(self, ctx: Context) -> None:
        ctx.out_objects.append(Empty("nn::am::service::IProcessWindingController"))

    @command(11)
    def get_library_applet_creator(self, ctx: Context) -> None:
        ctx.out_objects.append(Empty("nn::am::service::ILibraryAppletCreator"))

    @command(20)
    def get_application_functions(self, ctx: Context) -> None:
        ctx.out_objects.append(ApplicationFunctions(self.st))

    @command(1000)
    def get_debug_functions(self, ctx: Context) -> None:
        ctx.out_objects.append(Empty("nn::am::service::IDebugFunctions"))


class AppletService(Interface):
    """appletOE's IApplicationProxyService and appletAE's IAllSystemAppletProxiesService."""

    name = "nn::am::service::IApplicationProxyService"
    service = "appletOE"

    def __init__(self, st: AppletState) -> None:
        self.st = st

    def _open(self, ctx: Context) -> None:
        ctx.out_objects.append(ApplicationProxy(self.st))

    open_application_proxy = command(0)(_open)
    open_system_applet_proxy = command(100)(_open)
    open_library_applet_proxy_old = command(200)(_open)
    open_library_applet_proxy = command(201)(_open)
    open_overlay_applet_proxy = command(300)(_open)
    open_system_application_proxy = command(350)(_open)


def register(server: Server, kernel_ref, system: SystemService) -> None:
    state: dict[str, AppletState] = {}

    def service() -> AppletService:
        if "st" not in state:
            state["st"] = AppletState(kernel_ref(), system)
        return AppletService(state["st"])

    server.services["appletOE"] = service
    server.services["appletAE"] = service
