/* wmclose WINDOW_ID: ask an X11 window to close, as a window manager's close button does
 * (a WM_PROTOCOLS client message carrying WM_DELETE_WINDOW). The GUI tests run on a bare Xvfb
 * with no window manager, and xdotool can only destroy or kill a window, which is not what a
 * person closing it does. Build: cc -o wmclose wmclose.c -lX11 */
#include <X11/Xlib.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
	if (argc != 2) {
		fprintf(stderr, "usage: wmclose WINDOW_ID\n");
		return 2;
	}
	Display *d = XOpenDisplay(NULL);
	if (!d) {
		fprintf(stderr, "wmclose: cannot open the display\n");
		return 1;
	}
	Window w = (Window)strtoul(argv[1], NULL, 0);
	XEvent ev = {0};
	ev.xclient.type = ClientMessage;
	ev.xclient.window = w;
	ev.xclient.message_type = XInternAtom(d, "WM_PROTOCOLS", False);
	ev.xclient.format = 32;
	ev.xclient.data.l[0] = (long)XInternAtom(d, "WM_DELETE_WINDOW", False);
	ev.xclient.data.l[1] = CurrentTime;
	if (!XSendEvent(d, w, False, NoEventMask, &ev)) {
		fprintf(stderr, "wmclose: XSendEvent failed\n");
		return 1;
	}
	XSync(d, False);
	XCloseDisplay(d);
	return 0;
}
