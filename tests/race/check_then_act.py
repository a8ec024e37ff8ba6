# check_then_act.py - two threads withdraw 100 from a balance of 100, each
# checking the balance first, with a call in between (a log line, a
# database read) that releases the GIL: the classic check-then-act race. Exits 0 when the
# balance stays >= 0, 1 when both withdrew. Natively the window is too
# short to hit; under hvrun's default schedule the first thread does both
# steps in its turn; `hvrun analyze` finds the --chaos seeds that cut it
# in between.
import threading
import time

balance = 100

def withdraw():
    global balance
    if balance >= 100:
        time.sleep(0)  # a call that lets other threads run (the GIL goes)
        balance -= 100

threads = [threading.Thread(target=withdraw) for _ in range(2)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("balance", balance)
raise SystemExit(0 if balance >= 0 else 1)
