"""The official Python SDK (PyPI `plivo`) driving voxgate: send an SMS, place a call, list
live calls and call records.

UNTESTED: the test suite does not install the Python SDK, so this script has not been run
against the SDK itself. It follows the SDK's source (plivo/rest/client.py):
`plivo.RestClient(auth_id, auth_token, proxies=None, timeout=5)` has no base-URL option; every
request goes to https://api.plivo.com. It reaches voxgate through examples/sdk-bridge.ts given
as `proxies` (the SDK passes its own `proxies` to requests, so HTTPS_PROXY in the environment
is not used), with the bridge's certificate authority trusted by the client's sessions
(`session.verify`; REQUESTS_CA_BUNDLE is not read on this path either).

    pip install plivo
    npm run example:sdk-bridge            # in another terminal
    python3 examples/sdk_python.py --from 14155550123 --to sip:alice@127.0.0.1:5070 \\
        --sms-to 447400123456

Settings: --bridge (SDK_BRIDGE, default http://127.0.0.1:8043), --ca (default
data/sdk-bridge/ca.pem), credentials from VOXGATE_AUTH_ID and VOXGATE_AUTH_TOKEN or
data/main-account.env (--account-file).
"""

import argparse
import os
import re
import time

import plivo


def credentials(path):
    auth_id = os.environ.get("VOXGATE_AUTH_ID")
    auth_token = os.environ.get("VOXGATE_AUTH_TOKEN")
    if auth_id and auth_token:
        return auth_id, auth_token
    with open(path, encoding="utf-8") as f:
        text = f.read()
    values = dict(re.findall(r"^(VOXGATE_AUTH_(?:ID|TOKEN))=(.*)$", text, re.M))
    return values["VOXGATE_AUTH_ID"].strip(), values["VOXGATE_AUTH_TOKEN"].strip()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bridge", default=os.environ.get("SDK_BRIDGE", "http://127.0.0.1:8043"))
    parser.add_argument("--ca", default=os.environ.get("SDK_BRIDGE_CA", "data/sdk-bridge/ca.pem"))
    parser.add_argument("--account-file", default="data/main-account.env")
    parser.add_argument("--from", dest="from_", default="14155550123")
    parser.add_argument("--to", help="a number or a SIP URI to call")
    parser.add_argument("--answer-url", default="http://127.0.0.1:8090/answer")
    parser.add_argument("--sms-to", help="a number to send an SMS to")
    args = parser.parse_args()

    auth_id, auth_token = credentials(args.account_file)
    # Every request of this SDK goes to https://api.plivo.com: through the bridge to voxgate.
    client = plivo.RestClient(auth_id, auth_token, proxies={"https": args.bridge}, timeout=10)
    # Trust the bridge's local certificate authority for the api.plivo.com it presents.
    client.session.verify = args.ca
    client.multipart_session.verify = args.ca

    if args.sms_to:
        sent = client.messages.create(src=args.from_, dst=args.sms_to, text="Hello from the Python SDK")
        print("SMS:", sent.message, sent.message_uuid)
    else:
        print("SMS: skipped (give --sms-to)")

    if args.to:
        call = client.calls.create(from_=args.from_, to_=args.to, answer_url=args.answer_url)
        print("call:", call.message, "request", call.request_uuid)
        time.sleep(2)
        live = client.live_calls.list_ids()
        print("live calls:", live.calls if hasattr(live, "calls") else live)

    records = client.calls.list(limit=5)
    print("call records:", len(records.objects))
    for record in records.objects:
        print(" ", record.call_uuid, record.from_number, "->", record.to_number, record.hangup_cause_name)


if __name__ == "__main__":
    main()
