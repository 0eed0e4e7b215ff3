"""What the memoryapp client and the server agree on, in the standard library only.

Both sides import it and it imports neither, so the server never imports the client
(``memoryapp_client``) and the client needs nothing of the server's dependencies.
"""
