"""This machine's address on its local network, as the other phones at the table reach
it (`make run HOST=0.0.0.0` gives it to the QR codes as SITE_URL): the address the system
would send from towards the network. No packet is sent (a UDP socket's connect only
chooses the route). Without a network, the loopback address."""

import socket


def lan_address() -> str:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("10.254.254.254", 1))
            return probe.getsockname()[0]
        except OSError:
            return "127.0.0.1"


if __name__ == "__main__":
    print(lan_address())
