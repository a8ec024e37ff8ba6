# A local HTTP server on port 0 (in a thread) and three client requests:
# under --verify both runs must print the same port, though run 1 leaves
# TIME_WAIT connections on it.
import http.server, threading, urllib.request, socketserver
class H(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_GET(self):
        body = b"hello from " + self.path.encode()
        self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
srv = socketserver.TCPServer(("127.0.0.1", 0), H)
port = srv.server_address[1]
t = threading.Thread(target=srv.serve_forever, daemon=True); t.start()
for i in range(3):
    print(urllib.request.urlopen("http://127.0.0.1:%d/x%d" % (port, i)).read().decode(), port)
srv.shutdown()
