#!/bin/sh
# exec model test program: prints something that is not JSON and exits 0.
cat >/dev/null
echo 'this is {not json'
